package gitfiles

// DiscoverWith is discover for the external tests: files false always asks
// git.
var DiscoverWith = discover

// DiscoverFromFiles is discoverFromFiles for the external tests.
var DiscoverFromFiles = discoverFromFiles
