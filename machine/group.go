package machine

// GroupAction is what custody does, before it runs a resource command,
// with the process group recorded in the entry's intent.
type GroupAction string

// The group rules: a command a killed custody left running never runs
// alongside the one custody is about to start.
const (
	// GroupNone: no group is recorded, or it has ended; go on.
	GroupNone GroupAction = "none"
	// GroupEnd: the recorded group still runs on this host; end it
	// (SIGTERM, a grace, SIGKILL) and go on only once it is gone.
	GroupEnd GroupAction = "end"
	// GroupForeign: the group was recorded on another host, where custody
	// cannot see or signal it; its holder's liveness decides (resume
	// leaves an intent of a live or unknown holder alone).
	GroupForeign GroupAction = "foreign"
)

// GroupFacts is what custody observed of a recorded group.
type GroupFacts struct {
	// Host is this host's name.
	Host string
	// Alive: the group's leader lives with the recorded start time, or
	// the leader is gone and a member is left.
	Alive bool
}

// DecideGroup picks the rule for the group recorded in in. It is pure.
func DecideGroup(in *ResourceIntent, f GroupFacts) GroupAction {
	switch {
	case in == nil || in.Group == nil:
		return GroupNone
	case in.Group.Host != f.Host:
		return GroupForeign
	case f.Alive:
		return GroupEnd
	}
	return GroupNone
}
