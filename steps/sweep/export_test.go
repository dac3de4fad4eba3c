package sweep

// WithChunks is o with chunks of at most trees trees and entries entries
// of build output: small chunks, for the tests of what crosses them.
func WithChunks(o Options, trees, entries int) Options {
	o.chunkTrees, o.chunkEntries = trees, entries
	return o
}
