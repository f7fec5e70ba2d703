import { useTranslation } from 'react-i18next';
import { protocolLabel } from '../format.js';

/** The protocol orders the window offers, for every node (Settings) or one (Nodes). */
export const PROTOCOL_ORDERS = [
  'openvpn,sevpn,sstp',
  'openvpn,sstp',
  'sstp,openvpn',
  'openvpn,sstp,sevpn',
  'sevpn,openvpn,sstp',
  'openvpn',
  'sstp',
  'sevpn',
] as const;

/**
 * The `<option>`s of a protocol order select: the offered orders in words, and `current` too when
 * the config file set an order the window does not offer (a select must show what is in force).
 */
export function ProtocolOrderOptions({ current }: { current: string }) {
  const { t } = useTranslation();
  const offered: readonly string[] = PROTOCOL_ORDERS;
  const other = current && !offered.includes(current) ? current : null;
  return (
    <>
      {PROTOCOL_ORDERS.map((o) => (
        <option key={o} value={o}>
          {t(`settings.protocolOrder.${o.replaceAll(',', '-')}`)}
        </option>
      ))}
      {other ? (
        <option value={other}>
          {other
            .split(',')
            .map((p) => protocolLabel(p as 'openvpn' | 'sstp' | 'sevpn'))
            .join(' → ')}
        </option>
      ) : null}
    </>
  );
}
