// skillbox_log: lines in the run's logs.

import { release, skillbox_log, stringBlock } from "./host";

/** The severity of a log line; the values are the ABI's. */
export enum Level {
  Debug = 0,
  Info = 1,
  Warn = 2,
  Error = 3,
}

/**
 * Appends msg to the run's logs. Logging never fails: past the run's log quota the host
 * drops the line and counts it. Control characters other than tab are escaped by the host.
 */
export function log(level: Level, msg: string): void {
  const m = stringBlock(msg);
  skillbox_log(<i32>level, m);
  release(m);
}

/** log(Level.Debug, msg) */
export function debug(msg: string): void {
  log(Level.Debug, msg);
}

/** log(Level.Info, msg) */
export function info(msg: string): void {
  log(Level.Info, msg);
}

/** log(Level.Warn, msg) */
export function warn(msg: string): void {
  log(Level.Warn, msg);
}

/** log(Level.Error, msg). A log line, not an error value. */
export function error(msg: string): void {
  log(Level.Error, msg);
}
