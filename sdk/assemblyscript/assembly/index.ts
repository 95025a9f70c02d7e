// @skillbox/sdk: the AssemblyScript guest SDK for Skillbox skills (ABI skillbox/v1).
//
// A skill exports `execute` and hands its handler to run():
//
//   import { run, succeed, JsonValue, SkillResult, JsonBuilder, info } from "@skillbox/sdk";
//
//   export function execute(): i32 { return run(greet); }
//
//   function greet(args: JsonValue): SkillResult {
//     const name = args.getString("name", "world");
//     info("greeting " + name);
//     return succeed(new JsonBuilder().setString("greeting", "Hello, " + name + "!").toString());
//   }
//
// Build with `--use abort=~lib/@skillbox/sdk/assembly/abort/skillboxAbort` so that the
// module does not import env.abort (see README.md).
export * from "./status";
export * from "./json";
export * from "./log";
export * from "./fetch";
export * from "./files";
export * from "./run";
export { skillboxAbort } from "./abort";
