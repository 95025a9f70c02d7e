// execute is called with the validated arguments (defaults applied) and the SkillContext:
// ctx.fetch, ctx.env, ctx.readFile, ctx.writeFile and ctx.log reach only what skill.json asks
// for and the operator's policy allows. Its return value is the result.
interface Args {
  name: string;
}

interface SkillContext {
  log(message: string, level?: "debug" | "info" | "warn" | "error"): void;
}

export async function execute(args: Args, ctx: SkillContext): Promise<{ greeting: string }> {
  ctx.log(`greeting ${args.name}`);
  return { greeting: `Hello, ${args.name}!` };
}
