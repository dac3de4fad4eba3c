// Package hostio is what every observation stands on: the one Runner every
// external command goes through (own process group, deadline, bounded
// output, no descendant outliving it; only the pager, which StartAttached
// starts on custody's own terminal, has no deadline: decision 0250), Git
// with custody's fixed environment, a repository's identity (Repo), lstat
// identity, process liveness, and the error for git output of an
// unexpected shape. It knows nothing of git's files, remotes or proofs;
// gitfiles, proof and observe build on it (decision 0231).
package hostio
