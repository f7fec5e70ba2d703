import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiFailure } from './http-util.js';

export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  params: Record<string, string>;
}

type Handler = (ctx: RequestContext) => unknown;

interface Route {
  method: string;
  parts: string[];
  handler: Handler;
}

/** Method + path with `:param` segments; 404 for an unknown path, 405 for a known path and wrong method. */
export class RequestDispatch {
  readonly #routes: Route[] = [];

  on(method: string, path: string, handler: Handler): this {
    this.#routes.push({ method, parts: path.split('/').filter(Boolean), handler });
    return this;
  }

  match(method: string, pathname: string): { handler: Handler; params: Record<string, string> } {
    const segs = pathname
      .split('/')
      .filter(Boolean)
      .map((s) => decodeURIComponent(s));
    let pathKnown = false;
    for (const r of this.#routes) {
      if (r.parts.length !== segs.length) continue;
      const params: Record<string, string> = {};
      if (!r.parts.every((p, i) => (p.startsWith(':') ? ((params[p.slice(1)] = segs[i]!), true) : p === segs[i])))
        continue;
      pathKnown = true;
      if (r.method === method) return { handler: r.handler, params };
    }
    if (pathKnown) throw new ApiFailure(405, 'GH_ERR_API_METHOD', `${method} is not allowed on ${pathname}`);
    throw new ApiFailure(404, 'GH_ERR_API_NOT_FOUND', `no such endpoint: ${pathname}`);
  }
}
