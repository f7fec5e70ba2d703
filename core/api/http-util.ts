import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';

/** An API failure with its HTTP status; answered as JSON {error, message}. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
  ) {
    super(message);
  }
}

export const MAX_BODY_BYTES = 16 * 1024;

/** The body as text, refused with 413 past `maxBytes`. */
export async function readText(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<string> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > maxBytes) throw new ApiFailure(413, 'GH_ERR_API_BODY_TOO_LARGE', `body over ${maxBytes} bytes`);
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      req.destroy();
      throw new ApiFailure(413, 'GH_ERR_API_BODY_TOO_LARGE', `body over ${maxBytes} bytes`);
    }
    parts.push(chunk as Buffer);
  }
  return Buffer.concat(parts).toString('utf8');
}

/** The JSON body, capped and parsed against `schema`; an empty body is `{}`. */
export async function readJson<T extends z.ZodType>(
  req: IncomingMessage,
  schema: T,
  maxBytes = MAX_BODY_BYTES,
): Promise<z.infer<T>> {
  return parseJsonBody(await readText(req, maxBytes), schema);
}

/** A request body's text parsed against `schema` (empty is `{}`); anything else is a 400 ApiFailure. */
export function parseJsonBody<T extends z.ZodType>(body: string, schema: T): z.infer<T> {
  const text = body.trim();
  let data: unknown = {};
  if (text) {
    try {
      data = JSON.parse(text);
    } catch (err) {
      throw new ApiFailure(400, 'GH_ERR_API_BAD_REQUEST', `body is not JSON: ${(err as Error).message}`);
    }
  }
  return parseOr400(schema, data, 'body');
}

export function parseOr400<T extends z.ZodType>(schema: T, data: unknown, what: string): z.infer<T> {
  const r = schema.safeParse(data);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new ApiFailure(
      400,
      'GH_ERR_API_BAD_REQUEST',
      `${what}${i.path.length ? `.${i.path.join('.')}` : ''}: ${i.message}`,
    );
  }
  return r.data;
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(text);
}

export function sendEmpty(res: ServerResponse, status = 204): void {
  res.writeHead(status, { 'cache-control': 'no-store' });
  res.end();
}

/** `part` of this core, or a 409 GH_ERR_API_UNSUPPORTED saying why it is missing (an embedding or egress without it). */
export function supported<T>(part: T | null | undefined, why: string): T {
  if (part === null || part === undefined) throw new ApiFailure(409, 'GH_ERR_API_UNSUPPORTED', why);
  return part;
}
