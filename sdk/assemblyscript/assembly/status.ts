// Reply statuses (docs/abi.md §3) and the Result objects every fallible call returns.
// AssemblyScript has no exceptions that a program can catch, so a host call that can
// fail returns a result to test instead of throwing.

/** The first byte of every host reply. The values are the ABI's and never change. */
export enum Status {
  /** done; the payload is the value */
  OK = 0,
  /** the variable is unset, the file does not exist */
  NotFound = 1,
  /** the run's grant does not allow it */
  Denied = 2,
  /** the request is malformed (bad JSON, URL or path, oversized argument) */
  Invalid = 3,
  /** a per-run quota was reached */
  Limit = 4,
  /** allowed, but it failed (connection refused, DNS, timeout, I/O) */
  Failed = 5,
}

/**
 * The ABI's lower-case name of s: "ok", "not_found", "denied", "invalid", "limit",
 * "failed" ("status(N)" for a value this SDK does not know). The conformance guests of
 * every language report outcomes with these names.
 */
export function statusName(s: Status): string {
  switch (s) {
    case Status.OK: return "ok";
    case Status.NotFound: return "not_found";
    case Status.Denied: return "denied";
    case Status.Invalid: return "invalid";
    case Status.Limit: return "limit";
    case Status.Failed: return "failed";
  }
  return "status(" + (<i32>s).toString() + ")";
}

/** The words used in error messages: "not found", "denied", ... (like the Go SDK). */
export function statusText(s: Status): string {
  return s == Status.NotFound ? "not found" : statusName(s);
}

/**
 * The outcome of a host call that returns no value (writeFile), and the base of
 * Result<T>. Test `ok` before using anything else.
 */
export class HostResult {
  /** The operation: "fetch", "env", "read_file", "write_file" or "json". */
  op: string;
  /** Status.OK on success, otherwise why it failed. */
  status: Status;
  /** The host's explanation of a failure; "" on success (and sometimes on failure). */
  message: string;

  constructor(op: string, status: Status, message: string) {
    this.op = op;
    this.status = status;
    this.message = message;
  }

  /** True when status is Status.OK. */
  get ok(): bool {
    return this.status == Status.OK;
  }

  /** statusName(status): "ok", "not_found", "denied", ... */
  get outcome(): string {
    return statusName(this.status);
  }

  /**
   * "op: kind: message", the Go SDK's error text, e.g.
   * `fetch: denied: host "x" is not on the grant`; "" on success.
   */
  get error(): string {
    if (this.ok) return "";
    let s = this.op + ": " + statusText(this.status);
    if (this.message.length > 0) s += ": " + this.message;
    return s;
  }

  toString(): string {
    return this.ok ? this.op + ": ok" : this.error;
  }
}

/**
 * The outcome of a host call that returns a value: `value` is set when `ok`, null
 * otherwise. AssemblyScript does not narrow fields, so copy it to a local or assert it:
 *
 *   const r = readText("/workspace/in.txt");
 *   if (!r.ok) return fail(r.error);
 *   const text = r.value!;
 */
export class Result<T> extends HostResult {
  value: T | null;

  constructor(op: string, status: Status, message: string, value: T | null) {
    super(op, status, message);
    this.value = value;
  }

  /** The value when ok, else def. */
  valueOr(def: T): T {
    const v = this.value;
    if (this.ok && v !== null) return v;
    return def;
  }
}
