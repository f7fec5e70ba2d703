/** Types of stream.mjs: the rig's seeded AES-CTR byte stream (so a download's SHA-256 is known without a file). */
export function seededStream(total: number): Generator<Buffer>;
export function seededSha256(total: number): string;
