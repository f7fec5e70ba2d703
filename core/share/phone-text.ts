/** The phone page's words, in the app's four languages (#63): what to tap, and what it protects. */
export type PhoneLang = 'en' | 'fa' | 'zh-CN' | 'zh-TW';

export interface PhoneText {
  readonly title: string;
  readonly intro: string;
  readonly stockHeading: string;
  readonly android: string;
  readonly ios: string;
  readonly pacLabel: string;
  readonly appsHeading: string;
  readonly apps: string;
  readonly manualHeading: string;
  readonly server: string;
  readonly port: string;
  readonly user: string;
  readonly password: string;
  readonly clashProfile: string;
  readonly enrolled: string;
  readonly protects: string;
  readonly secret: string;
}

export const PHONE_TEXT: Readonly<Record<PhoneLang, PhoneText>> = {
  en: {
    title: 'Use Gatehop on this device',
    intro:
      'This device ({device}) may now use the tunnels of the computer that runs Gatehop, while both are on this network.',
    stockHeading: 'Without an app: the Wi-Fi settings',
    android:
      'Android: Settings → Network → Wi-Fi → hold this network (or tap the gear) → Edit → Advanced options → Proxy: Proxy Auto-Config → paste the address below → Save.',
    ios: 'iPhone and iPad: Settings → Wi-Fi → tap (i) beside this network → Configure Proxy → Automatic → paste the address below → Save.',
    pacLabel: 'Proxy auto-config address',
    appsHeading: 'With an app (Clash Meta, sing-box, Shadowrocket)',
    apps: 'Apps that take a user name and password use these; they work wherever this device is on this network.',
    manualHeading: 'Manual proxy (iPhone: Configure Proxy → Manual, with Authentication on)',
    server: 'Server',
    port: 'Port',
    user: 'User name',
    password: 'Password',
    clashProfile: 'Profile for Clash Meta (mihomo)',
    enrolled: 'This device is let in from {address} without a password until {until}; each use renews it.',
    protects:
      'What this protects: only devices on this network can connect, and only with this page’s password or from the address that opened it. What it does not: another device that takes over this address on the same network gets in too, and the Wi-Fi setting sends the page’s address in the clear on this network.',
    secret: 'This page holds this device’s password: do not share its address.',
  },
  fa: {
    title: 'استفاده از Gatehop در این دستگاه',
    intro:
      'این دستگاه ({device}) اکنون می‌تواند از تونل‌های رایانه‌ای که Gatehop را اجرا می‌کند استفاده کند، تا وقتی هر دو در این شبکه هستند.',
    stockHeading: 'بدون برنامه: تنظیمات Wi-Fi',
    android:
      'اندروید: تنظیمات ← شبکه ← Wi-Fi ← این شبکه را نگه دارید (یا روی چرخ‌دنده بزنید) ← ویرایش ← گزینه‌های پیشرفته ← پروکسی: پیکربندی خودکار پروکسی ← نشانی زیر را بچسبانید ← ذخیره.',
    ios: 'آیفون و آیپد: تنظیمات ← Wi-Fi ← روی (i) کنار این شبکه بزنید ← پیکربندی پروکسی ← خودکار ← نشانی زیر را بچسبانید ← ذخیره.',
    pacLabel: 'نشانی پیکربندی خودکار پروکسی',
    appsHeading: 'با یک برنامه (Clash Meta، sing-box، Shadowrocket)',
    apps: 'برنامه‌هایی که نام کاربری و گذرواژه می‌گیرند از این‌ها استفاده می‌کنند؛ هرجای این شبکه که این دستگاه باشد کار می‌کنند.',
    manualHeading: 'پروکسی دستی (آیفون: پیکربندی پروکسی ← دستی، با احراز هویت روشن)',
    server: 'سرور',
    port: 'درگاه',
    user: 'نام کاربری',
    password: 'گذرواژه',
    clashProfile: 'نمایه برای Clash Meta (mihomo)',
    enrolled: 'این دستگاه از {address} بدون گذرواژه تا {until} پذیرفته می‌شود؛ هر استفاده آن را تمدید می‌کند.',
    protects:
      'آنچه این محافظت می‌کند: فقط دستگاه‌های این شبکه می‌توانند وصل شوند، و فقط با گذرواژه این صفحه یا از نشانی‌ای که آن را باز کرد. آنچه محافظت نمی‌کند: دستگاه دیگری که همین نشانی را در همین شبکه بگیرد هم وارد می‌شود، و تنظیم Wi-Fi نشانی این صفحه را در این شبکه بدون رمزگذاری می‌فرستد.',
    secret: 'این صفحه گذرواژه این دستگاه را دارد: نشانی آن را با کسی در میان نگذارید.',
  },
  'zh-CN': {
    title: '在此设备上使用 Gatehop',
    intro: '此设备（{device}）现在可以使用运行 Gatehop 的电脑的隧道，只要两者都在这个网络上。',
    stockHeading: '无需应用：Wi-Fi 设置',
    android:
      'Android：设置 → 网络 → Wi-Fi → 长按此网络（或点齿轮）→ 修改 → 高级选项 → 代理：自动配置代理 → 粘贴下面的地址 → 保存。',
    ios: 'iPhone 和 iPad：设置 → 无线局域网 → 点此网络旁的 (i) → 配置代理 → 自动 → 粘贴下面的地址 → 存储。',
    pacLabel: '代理自动配置地址',
    appsHeading: '使用应用（Clash Meta、sing-box、Shadowrocket）',
    apps: '可以填写用户名和密码的应用使用这些信息；只要此设备在这个网络上就能用。',
    manualHeading: '手动代理（iPhone：配置代理 → 手动，打开鉴定）',
    server: '服务器',
    port: '端口',
    user: '用户名',
    password: '密码',
    clashProfile: 'Clash Meta（mihomo）配置文件',
    enrolled: '此设备从 {address} 无需密码即可接入，直到 {until}；每次使用都会续期。',
    protects:
      '它保护什么：只有这个网络上的设备能连接，而且只能凭此页的密码或从打开此页的地址连接。它不保护什么：在同一网络上占用这个地址的另一台设备也能接入；Wi-Fi 设置会在这个网络上以明文发送此页的地址。',
    secret: '此页包含此设备的密码：请勿分享此页的地址。',
  },
  'zh-TW': {
    title: '在此裝置上使用 Gatehop',
    intro: '此裝置（{device}）現在可以使用執行 Gatehop 的電腦的通道，只要兩者都在這個網路上。',
    stockHeading: '不用 App：Wi-Fi 設定',
    android:
      'Android：設定 → 網路 → Wi-Fi → 長按此網路（或點齒輪）→ 修改 → 進階選項 → Proxy：Proxy 自動設定 → 貼上下面的網址 → 儲存。',
    ios: 'iPhone 和 iPad：設定 → Wi-Fi → 點此網路旁的 (i) → 設定代理伺服器 → 自動 → 貼上下面的網址 → 儲存。',
    pacLabel: 'Proxy 自動設定網址',
    appsHeading: '使用 App（Clash Meta、sing-box、Shadowrocket）',
    apps: '可以填寫使用者名稱和密碼的 App 使用這些資訊；只要此裝置在這個網路上就能用。',
    manualHeading: '手動代理（iPhone：設定代理伺服器 → 手動，開啟鑑定）',
    server: '伺服器',
    port: '連接埠',
    user: '使用者名稱',
    password: '密碼',
    clashProfile: 'Clash Meta（mihomo）設定檔',
    enrolled: '此裝置從 {address} 不需密碼即可連入，直到 {until}；每次使用都會延長。',
    protects:
      '它保護什麼：只有這個網路上的裝置能連線，而且只能憑此頁的密碼或從開啟此頁的位址連線。它不保護什麼：在同一網路上佔用這個位址的另一台裝置也能連入；Wi-Fi 設定會在這個網路上以明文傳送此頁的網址。',
    secret: '此頁包含此裝置的密碼：請勿分享此頁的網址。',
  },
};

/** The language a phone asks for (Accept-Language, or ?lang=), among the four; English otherwise. */
export function phoneLang(acceptLanguage: string | undefined, asked: string | null): PhoneLang {
  const tags = [asked ?? '', ...(acceptLanguage ?? '').split(',').map((t) => t.split(';')[0]!.trim())];
  for (const raw of tags) {
    const tag = raw.toLowerCase();
    if (tag === '') continue;
    if (tag.startsWith('fa')) return 'fa';
    if (/^zh-(tw|hk|mo|hant)/.test(tag)) return 'zh-TW';
    if (tag.startsWith('zh')) return 'zh-CN';
    if (tag.startsWith('en')) return 'en';
  }
  return 'en';
}
