// Package proof is the proof search against remotes: what each remote
// advertises (Advertise, a RemoteView), and whether a head's commits are
// published there by ancestry, patch equivalence or a squash (Prove,
// ProveAll). It reads git's files only through gitfiles (decision 0231).
package proof
