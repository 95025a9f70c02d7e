# execute is called with the validated arguments (defaults applied) and the SkillContext:
# ctx.fetch, ctx.env, ctx.read_file, ctx.write_file and ctx.log reach only what skill.json asks
# for and the operator's policy allows. Its return value (JSON-serialisable) is the result.
def execute(args, ctx):
    ctx.log(f"greeting {args['name']}")
    return {"greeting": f"Hello, {args['name']}!"}
