package machine

import (
	"fmt"
	"strings"
)

// LandMethod is how custody land integrates a tree's branch into the
// target branch.
type LandMethod string

// The ways land integrates (docs/decisions/0259-land.md).
const (
	// LandFastForward moves the target to HEAD: only when the target's
	// tip is an ancestor of HEAD. It is what land does without a method.
	LandFastForward LandMethod = "fast-forward"
	// LandSquash makes one commit on the target's tip holding every
	// change the branch makes.
	LandSquash LandMethod = "squash"
	// LandRebase replays each commit the branch adds onto the target's
	// tip, keeping its author and message.
	LandRebase LandMethod = "rebase"
	// LandMerge makes a merge commit of the target's tip and HEAD.
	LandMerge LandMethod = "merge"
	// LandNothing is chosen when the target already holds HEAD: nothing
	// is pushed.
	LandNothing LandMethod = "nothing"
)

// Land events, journaled under the tree's record: an intent before the
// push, then exactly one of landed or land-abandoned.
const (
	// EventLandIntent is journaled before the push: what is about to be
	// pushed where (a LandIntent).
	EventLandIntent = "land-intent"
	// EventLanded is journaled once the proving remote advertises the new
	// tip (a LandIntent, with Resumed when a later run found it).
	EventLanded = "landed"
	// EventLandAbandoned is journaled when an intent's push did not land
	// (the remote moved, the push failed): with Why.
	EventLandAbandoned = "land-abandoned"
)

// LandTarget is where land integrates: a branch of the proving remote.
type LandTarget struct {
	// Push is what git pushes to: the remote's name, or a URL
	// (PushTarget).
	Push string `json:"push"`
	// Remote is the remote whose advertisement proves the landing.
	Remote string `json:"remote"`
	// Ref is the branch (refs/heads/…) and Tip the commit it advertised.
	Ref string `json:"ref"`
	Tip string `json:"tip"`
}

// LandIntent is what a landing journals before its push and again when it
// landed: the target, the tip integrated against (Old) and the tip pushed
// (New), the method and the tree's HEAD and branch.
type LandIntent struct {
	Method LandMethod `json:"method"`
	Push   string     `json:"push"`
	Remote string     `json:"remote"`
	Ref    string     `json:"ref"`
	Old    string     `json:"old"`
	New    string     `json:"new"`
	Head   string     `json:"head"`
	Branch string     `json:"branch,omitempty"`
	// Resumed says a later run found the push landed (landed only).
	Resumed bool `json:"resumed,omitempty"`
	// Why says why the push did not land (land-abandoned only).
	Why string `json:"why,omitempty"`
}

// LandTip is one ref a remote advertised, as land reads it.
type LandTip struct {
	Remote string
	Ref    string
	Commit string
	// Default is true for the branch the remote's HEAD names.
	Default bool
}

// DecideLandTarget picks where land integrates: the remote the push target
// says proves a push (push.Proves), and on it the branch onto names
// (refs/heads/<onto>) or else the one its HEAD names. No push target, a
// push that lands on a remote custody does not read (a fork's pushurl), a
// proving remote that did not answer, no default branch or more than one,
// or an onto branch it does not advertise, is a refusal that says so; retry
// is the land command to run again.
func DecideLandTarget(push *PushTarget, tips []LandTip, failures []RemoteFailure, onto, path, retry string) (LandTarget, *Refusal) {
	switch {
	case push == nil || (push.Remote == "" && push.URL == ""):
		why := "no remote is configured that custody can prove from"
		if push != nil && push.Why != "" {
			why = push.Why
		}
		return LandTarget{}, LandNoTargetRefusal(path, "no push lands where a remote custody proves from is read from ("+why+")",
			"custody land (after adding a remote custody reads: git remote add origin URL)")
	case push.AddAs != "":
		return LandTarget{}, LandNoTargetRefusal(path, fmt.Sprintf("remote %s pushes to %s, which no remote custody reads is read from, so a landing there could not be proven", push.Remote, push.URL),
			"git remote add "+QuoteArg(push.AddAs)+" "+QuoteArg(push.URL))
	}
	for _, f := range failures {
		if f.Remote == push.Proves {
			return LandTarget{}, LandNoTargetRefusal(path, "remote "+f.Remote+" did not answer: "+f.Error, retry)
		}
	}
	t := LandTarget{Push: push.Remote, Remote: push.Proves}
	if t.Push == "" {
		t.Push = push.URL
	}
	var found []LandTip
	for _, tip := range tips {
		if tip.Remote != push.Proves {
			continue
		}
		if (onto != "" && tip.Ref == "refs/heads/"+onto) || (onto == "" && tip.Default && strings.HasPrefix(tip.Ref, "refs/heads/")) {
			found = append(found, tip)
		}
	}
	switch {
	case len(found) == 1:
		t.Ref, t.Tip = found[0].Ref, found[0].Commit
		return t, nil
	case onto != "":
		return LandTarget{}, LandNoTargetRefusal(path, fmt.Sprintf("remote %s advertises no branch %s%s", push.Proves, onto, advertisedBranches(tips, push.Proves)),
			"git ls-remote --heads "+QuoteArg(push.Proves))
	case len(found) == 0:
		return LandTarget{}, LandNoTargetRefusal(path, fmt.Sprintf("remote %s names no default branch (its HEAD names no branch it advertises), so which branch to land on is ambiguous; name it with --onto BRANCH%s", push.Proves, advertisedBranches(tips, push.Proves)),
			"git ls-remote --heads "+QuoteArg(push.Proves))
	}
	names := make([]string, len(found))
	for i, f := range found {
		names[i] = f.Ref
	}
	return LandTarget{}, LandNoTargetRefusal(path, fmt.Sprintf("remote %s names more than one default branch (%s), so which branch to land on is ambiguous; name it with --onto BRANCH", push.Proves, strings.Join(names, ", ")),
		"git ls-remote --heads "+QuoteArg(push.Proves))
}

// advertisedBranches says which branches remote advertises, for a refusal
// that asks for --onto: the first five names, quoted as a shell would
// take them, and how many more.
func advertisedBranches(tips []LandTip, remote string) string {
	var names []string
	for _, t := range tips {
		if t.Remote == remote && strings.HasPrefix(t.Ref, "refs/heads/") {
			names = append(names, QuoteArg(strings.TrimPrefix(t.Ref, "refs/heads/")))
		}
	}
	switch {
	case len(names) == 0:
		return " (it advertises no branch)"
	case len(names) > 5:
		return fmt.Sprintf(" (it advertises %s and %d more)", strings.Join(names[:5], ", "), len(names)-5)
	}
	return " (it advertises " + strings.Join(names, ", ") + ")"
}

// LandFacts is what land observed of HEAD against the target's tip.
type LandFacts struct {
	// HeadHasTarget says the target's tip is HEAD or an ancestor of it.
	HeadHasTarget bool
	// TargetHasHead says HEAD is the target's tip or an ancestor of it.
	TargetHasHead bool
	// Commits is how many commits HEAD adds over the target's tip, and
	// Merges how many of them have more than one parent.
	Commits, Merges int
}

// DecideLand chooses how to integrate: nothing when the target already
// holds HEAD; without a method a fast-forward, refused when the branches
// diverged; --squash and --merge always make their one commit; --rebase
// fast-forwards when it can and refuses a branch holding merges (a
// rebase replays one-parent commits). retry is the land command without
// its method, to which the refusal adds the method it advises.
func DecideLand(method LandMethod, f LandFacts, t LandTarget, path string, retryWith func(LandMethod) string) (LandMethod, *Refusal) {
	if f.TargetHasHead {
		return LandNothing, nil
	}
	switch method {
	case "", LandFastForward:
		if f.HeadHasTarget {
			return LandFastForward, nil
		}
		return "", &Refusal{Code: CodeLandDiverged, Path: path, Retry: retryWith(LandRebase),
			Message: fmt.Sprintf("%s at %s moved on since the branch left it: %d commit(s) of the tree are not on it, so it cannot be fast-forwarded; choose how to integrate: --rebase, --squash or --merge",
				t.Ref, Abbrev(t.Tip, ShortCommit), f.Commits)}
	case LandRebase:
		if f.HeadHasTarget {
			return LandFastForward, nil
		}
		if f.Merges > 0 {
			return "", &Refusal{Code: CodeLandDiverged, Path: path, Retry: retryWith(LandMerge),
				Message: fmt.Sprintf("the branch holds %d merge commit(s), which a rebase does not replay; land it with --merge or --squash", f.Merges)}
		}
		return LandRebase, nil
	case LandSquash, LandMerge:
		return method, nil
	}
	panic(fmt.Sprintf("machine: land method %q", method))
}

// LandResumption is what became of an intent's push, as DecideLandResume
// finds it.
type LandResumption string

// The outcomes of an intent's push.
const (
	// LandResumeLanded: the remote advertises the new tip, or a tip that
	// holds it.
	LandResumeLanded LandResumption = "landed"
	// LandResumeNotLanded: the remote's ref does not hold the new tip;
	// the push did not happen or was undone.
	LandResumeNotLanded LandResumption = "not-landed"
	// LandResumeUnknown: the proving remote did not answer.
	LandResumeUnknown LandResumption = "unknown"
)

// DecideLandResume says whether the push of intent landed, from what the
// proving remote advertises for its ref now (advertised, "" when it does
// not advertise the ref), whether that commit holds intent.New
// (holdsNew), and whether the remote answered at all. It returns why,
// for a push that did not land.
func DecideLandResume(intent LandIntent, answered bool, advertised string, holdsNew bool) (LandResumption, string) {
	switch {
	case !answered:
		return LandResumeUnknown, "remote " + intent.Remote + " did not answer"
	case advertised != "" && advertised == intent.New:
		return LandResumeLanded, ""
	case advertised != "" && holdsNew:
		return LandResumeLanded, ""
	case advertised == intent.Old:
		return LandResumeNotLanded, fmt.Sprintf("%s is still at %s: the push did not happen", intent.Ref, Abbrev(intent.Old, ShortCommit))
	case advertised == "":
		return LandResumeNotLanded, fmt.Sprintf("remote %s no longer advertises %s", intent.Remote, intent.Ref)
	}
	return LandResumeNotLanded, fmt.Sprintf("%s moved from %s to %s, which does not hold %s", intent.Ref,
		Abbrev(intent.Old, ShortCommit), Abbrev(advertised, ShortCommit), Abbrev(intent.New, ShortCommit))
}

// PendingLand returns the landing of a record's journal that is not
// settled: the last land event, when it is an intent. Its events are the
// record's land events, oldest first, each with its LandIntent.
func PendingLand(events []string, intents []LandIntent) (LandIntent, bool) {
	for i := len(events) - 1; i >= 0; i-- {
		switch events[i] {
		case EventLandIntent:
			return intents[i], true
		case EventLanded, EventLandAbandoned:
			return LandIntent{}, false
		}
	}
	return LandIntent{}, false
}

// LastLanded returns the last landing of a record's journal that landed
// HEAD head: a run that landed and was cut short before the removal goes
// straight on to the removal, instead of integrating again (a squash
// would make a second commit of the same changes).
func LastLanded(events []string, intents []LandIntent, head string) (LandIntent, bool) {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i] == EventLanded {
			if intents[i].Head == head {
				return intents[i], true
			}
			return LandIntent{}, false
		}
	}
	return LandIntent{}, false
}

// LandSquashMessage is the message of a squash commit of branch's
// commits (their full messages, oldest first): one commit's own message,
// or a subject naming the branch and how many commits it squashes, then
// each commit's subject as a list.
func LandSquashMessage(branch string, messages []string) string {
	if len(messages) == 1 {
		return strings.TrimRight(messages[0], "\n") + "\n"
	}
	var b strings.Builder
	name := strings.TrimPrefix(branch, "refs/heads/")
	if name == "" {
		name = "detached HEAD"
	}
	fmt.Fprintf(&b, "Squashed %s (%d commits)\n\n", name, len(messages))
	for _, m := range messages {
		subject, _, _ := strings.Cut(strings.TrimLeft(m, "\n"), "\n")
		fmt.Fprintf(&b, "* %s\n", subject)
	}
	return b.String()
}

// LandMergeMessage is the message of a merge commit of branch into ref,
// as git merge writes one.
func LandMergeMessage(branch, ref string) string {
	return fmt.Sprintf("Merge branch '%s' into %s\n", strings.TrimPrefix(branch, "refs/heads/"), strings.TrimPrefix(ref, "refs/heads/"))
}

// LandBlocking is the refusals of a tree's assessment (as if finished)
// that refuse a landing: every one but the tree's work not being on a
// remote yet, which is what land publishes.
func LandBlocking(rs []Refusal) []Refusal {
	var out []Refusal
	for _, r := range rs {
		switch r.Code {
		case CodeUnpushedCommits, CodeDetachedHead, CodeNotFinished:
			continue
		}
		out = append(out, r)
	}
	return out
}
