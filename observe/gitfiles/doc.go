// Package gitfiles reads git's own files and answers exactly as git would,
// or says to ask git: the index and its cache tree, tree ids, refs, .git
// files and commondir, the worktree registry and its lock, admin entries,
// and the parsers of git's plumbing output about them. It imports hostio
// and nothing of remotes or proofs (decision 0231).
package gitfiles
