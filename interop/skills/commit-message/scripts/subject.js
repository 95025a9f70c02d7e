// Prints a commit subject line made of its arguments: capitalised, at most 50 characters, no
// trailing period. A program of an instruction skill, run in the sandbox by run_skill_script.
const words = process.argv.slice(2).join(" ").trim().replace(/\.+$/, "");
if (words === "") {
  console.error("usage: subject.js WORDS...");
  process.exit(2);
}
const subject = words[0].toUpperCase() + words.slice(1);
console.log(subject.length > 50 ? subject.slice(0, 49) + "…" : subject);
