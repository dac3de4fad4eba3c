// Package observe reads git and the filesystem into machine values. It never
// decides and never changes anything: every function here is a read.
//
// All external commands go through one Runner (own process group, deadline,
// bounded output, and no descendant outliving the command). Git runs with
// GIT_TERMINAL_PROMPT=0, LC_ALL=C, GIT_NO_REPLACE_OBJECTS=1, grafts off, and
// observations with GIT_OPTIONAL_LOCKS=0.
package observe
