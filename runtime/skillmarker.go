package runtime

// authorMarker marks a skill an agent wrote. Packages may not carry hidden files, so only the
// runtime writes it.
const authorMarker = ".skillbox-author.json"
