// Package failpoint holds the named points at which a build with the
// `failpoint` tag can be killed (CUSTODY_FAILPOINT=<point>) or held
// (CUSTODY_PAUSE=<point>); in ordinary builds both do nothing. It is a leaf
// below the steps core: the core and every feature may import it, and it
// imports nothing of ours. steps.Failpoints lists the points.
package failpoint
