// Package memimage starts a snapshotted module's linear memory from an image instead of copying
// its data segments in at every instantiation.
//
// A snapshot (the CPython interpreter after its start-up, see internal/cpython) is a module whose
// memory is made by ten thousand active data segments, 7 MiB in all. wazero evaluates every
// segment's offset and copies its bytes into a fresh memory on each instantiation: most of what a
// small run cost. [Split] takes those segments out of the module once and keeps their bytes as an
// [Image]; a run's memory then starts from the image, mapped copy-on-write from a sealed memory
// file where the system has one (Linux), so a run pays only for the pages it touches, and copied
// where it has not.
//
// The image is shared by every run and no run can change it: a mapping is private (a write makes
// the run's own copy of the page), and the file behind it is sealed against writes, growth and
// shrinking before the first mapping.
package memimage
