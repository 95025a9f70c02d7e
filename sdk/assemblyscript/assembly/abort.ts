// The abort handler, for `--use abort=~lib/@skillbox/sdk/assembly/abort/skillboxAbort`.

import { release, skillbox_log, stringBlock } from "./host";

let aborting = false;

/**
 * Replaces AssemblyScript's default abort, which would import env.abort from the host.
 * It logs "abort: <message> at <file>:<line>:<column>" at error level; the compiler then
 * traps (`unreachable`), so the run ends with error kind "trap" and the log line says
 * why. AssemblyScript cannot unwind, so an abort cannot become {"success":false}.
 */
export function skillboxAbort(message: string | null, fileName: string | null, line: u32, column: u32): void {
  if (aborting) return; // an abort while reporting one (e.g. out of memory): just trap
  aborting = true;
  let msg = "abort: " + (message !== null ? message : "(no message)");
  if (fileName !== null) msg += " at " + fileName + ":" + line.toString() + ":" + column.toString();
  const m = stringBlock(msg);
  skillbox_log(3, m);
  release(m);
}
