// The skill's entry point. Build it with `npm run build` (or `skillbox build` from the
// skill's directory); the SDK's README (sdk/assemblyscript/README.md) documents the API.
import { run, succeed, fail, info, JsonBuilder, JsonValue, SkillResult } from "@skillbox/sdk";

// execute is the function the host calls. run() parses the arguments, calls handle and
// writes the SkillResult envelope; it always returns 0.
export function execute(): i32 {
  return run(handle);
}

// handle is the skill: its arguments (validated against skill.json's parameters, with
// defaults applied) in, {"success":true,"result":...} or {"success":false,"error":...} out.
function handle(args: JsonValue): SkillResult {
  const name = args.getString("name", "world");
  if (name.length == 0) return fail("name is empty");
  info("greeting " + name);
  return succeed(new JsonBuilder().setString("greeting", "Hello, " + name + "!").toString());
}
