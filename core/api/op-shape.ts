/**
 * The shape of one operation of the contract (contract.ts) and the helpers its tables are written
 * with; the schemas files that hold a feature's operations (schemas/traffic.ts) use them too. No
 * Node imports: the renderer bundles this file.
 */
import { z } from 'zod';

export interface Operation<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** With `:name` segments, filled from the input's field of that name. */
  path: string;
  input: I;
  output: O;
  /** The HTTP status of success when not 200 (202 accepted, 204 no body). */
  okStatus?: 202 | 204;
  /** A body cap other than the API's 16 KiB. */
  maxBodyBytes?: number;
  /** A body that is not JSON (e.g. text/csv) is taken whole as this input field. */
  textField?: string;
}

export const op = <I extends z.ZodType, O extends z.ZodType>(o: Operation<I, O>): Operation<I, O> => o;
export const none = z.object({}).strict();
export const idParam = <K extends string>(name: K) =>
  z.object({ [name]: z.string().min(1).max(255) } as Record<K, z.ZodString>).strict();
