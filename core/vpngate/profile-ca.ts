import { pemBody, pemCertificates } from '../reach/index.js';

/**
 * The certificates in a profile's `<ca>` block, as the base64 of each PEM body with white space
 * removed, sorted: two profiles name the same CA when these are equal. Text only (no parse): what
 * is compared is what a tunnel would be handed. Empty for a profile with no `<ca>`.
 */
export function profileCaKey(profile: string): string {
  const block = /<ca>([\s\S]*?)<\/ca>/i.exec(profile)?.[1] ?? '';
  return pemCertificates(block).map(pemBody).sort().join(',');
}
