// Package repocheck holds tests of the repository as a whole rather than of one package: rules
// about what its tracked files may say. It has no code of its own.
package repocheck
