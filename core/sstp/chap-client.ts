import { ErrorCodes, GatehopError } from '../common/index.js';
import { authenticatorResponse, clientMppeKeys, generateNtResponse, verifyAuthenticatorResponse } from './mschapv2.js';
import { encodeCp, type CpPacket } from './ppp-codec.js';

/** The answer we gave to one MS-CHAPv2 challenge, and what the server must prove back. */
export interface ChapAnswer {
  id: number;
  /** The CHAP Response packet (sent again, unchanged, for a repeated challenge). */
  response: Buffer;
  ntResponse: Buffer;
  expect: Buffer;
}

const MSCHAP_ERRORS: Record<string, string> = {
  '646': 'the account may not log in at this time',
  '647': 'the account is disabled',
  '648': 'the password has expired',
  '649': 'the account has no dial-in permission',
  '691': 'the user name or password was refused',
  '709': 'the password could not be changed',
};

/** Our answer to a server's Challenge (code 1, RFC 2759 §4): value-size 16, the challenge, its name. */
export function answerChallenge(
  p: CpPacket,
  creds: { username: string; password: string; random: (n: number) => Buffer },
): ChapAnswer {
  if (p.data.length < 17 || p.data[0] !== 16)
    throw new GatehopError(ErrorCodes.SSTP_PROTOCOL, 'MS-CHAPv2 challenge is not 16 bytes');
  const challenge = p.data.subarray(1, 17);
  const peerChallenge = creds.random(16);
  const ntResponse = generateNtResponse(challenge, peerChallenge, creds.username, creds.password);
  const value = Buffer.concat([peerChallenge, Buffer.alloc(8), ntResponse, Buffer.from([0])]);
  return {
    id: p.id,
    response: encodeCp(2, p.id, Buffer.concat([Buffer.from([49]), value, Buffer.from(creds.username, 'utf8')])),
    ntResponse,
    expect: authenticatorResponse(creds.password, ntResponse, peerChallenge, challenge, creds.username),
  };
}

/**
 * The server's Success (code 3) or Failure (4) after our answer: the client's MPPE keys once the
 * server has proved it knows the password too, a coded error for a refusal or a false proof, null
 * for anything else.
 */
export function chapOutcome(
  p: CpPacket,
  answer: ChapAnswer,
  password: string,
): { sendKey: Buffer; recvKey: Buffer } | null {
  const message = p.data.toString('latin1');
  if (p.code === 3) {
    if (!verifyAuthenticatorResponse(message, answer.expect))
      throw new GatehopError(
        ErrorCodes.SSTP_AUTH_FAILED,
        'the server accepted us but its MS-CHAPv2 answer does not prove it knows the password',
      );
    return clientMppeKeys(password, answer.ntResponse);
  }
  if (p.code === 4) {
    const e = /E=(\d+)/.exec(message)?.[1] ?? '?';
    const text = /M=(.*)$/.exec(message)?.[1]?.trim();
    throw new GatehopError(
      ErrorCodes.SSTP_AUTH_FAILED,
      `MS-CHAPv2 refused: ${MSCHAP_ERRORS[e] ?? `error ${e}`}${text ? ` (${text})` : ''}`,
    );
  }
  return null;
}
