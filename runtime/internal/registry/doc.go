// Package registry is what the runtime knows of its skill packages: how one is loaded, checked
// and scanned, and what is remembered of it between scans and processes.
//
//   - Skill (skill.go) is one loaded version of a package: its manifest, SKILL.md frontmatter,
//     language, grant and its programs' grant (program.go), and what its load found wrong.
//     package runtime hands it out as runtime.Skill, the same value with only read-only methods.
//   - Its check (verify.go) reads its module or script once (script.go bundles a JavaScript or
//     TypeScript skill), bounds it (module.go: CheckModule) and digests its tree, and is
//     remembered as its Verdict; a scan adopts a remembered verdict when the files are unchanged.
//   - Scan (registry.go) loads every package of the skill directories into a Set, settles ids
//     two directories make alike, and Overlay lays a user's own Set over its tenant's.
//   - The Digester (digest.go) remembers file digests by their identity on disk and module checks
//     by content hash and limits; the index file and its journal (index.go) keep both for the
//     next process.
//
// The runtime decides what to do with what this package finds (which version runs, who sees a
// skill, when to rescan); this package never imports it.
package registry
