package machine

import (
	"slices"
	"strings"
)

// AdminFile is one member of a tree's own admin entry,
// <common>/worktrees/<key>/: git's per-worktree state, which dies with the
// tree when the entry is dropped. Name is its path inside the entry,
// slash-separated; Type what lstat says it is.
type AdminFile struct {
	Name string        `json:"name"`
	Type AdminFileType `json:"type"`
}

// AdminFileType is what an admin entry's member is on disk.
type AdminFileType string

// The types of an admin entry's member: a regular file, a directory, or
// anything else (a symlink, a FIFO, a socket, a device).
const (
	AdminRegular AdminFileType = "file"
	AdminDir     AdminFileType = "dir"
	AdminOther   AdminFileType = "other"
)

// AdminFate is what a removal does with one member of the tree's admin
// entry. Every member has exactly one; a member the catalogue does not
// know keeps the tree.
type AdminFate string

// The fates of an admin entry's member.
const (
	// FateDies: nothing in it is the person's, or what is is held
	// elsewhere: git's registry links, the tree's HEAD (a recovery
	// candidate) and index (accounted against HEAD by the content walk),
	// the lock (which keeps the tree as locked), caches.
	FateDies AdminFate = "dies"
	// FateObjects: a pseudoref naming objects (ORIG_HEAD, FETCH_HEAD, ...).
	// Every object it names that no ref reaches is kept under a recovery
	// ref before anything is deleted.
	FateObjects AdminFate = "objects"
	// FateReflog: a reflog. Every commit it names that no ref reaches is
	// kept under a recovery ref.
	FateReflog AdminFate = "reflog"
	// FateCopied: a person's setting or text (config.worktree, the sparse
	// checkout's patterns, a message not yet used), copied byte for byte
	// under the recovery directory.
	FateCopied AdminFate = "copied"
	// FateKeeps: the tree is kept, with AdminMember.Code.
	FateKeeps AdminFate = "keeps"
)

// AdminMember is what the catalogue says of one admin entry member: its
// fate, and for a member that keeps the tree the refusal code and what it
// is (for an operation, the operation's name).
type AdminMember struct {
	Fate AdminFate
	Code Code
	What string
}

// adminTop is the catalogue of names git (and custody) put at the top of a
// linked worktree's admin entry, by the type each must have. Containers
// (logs/, refs/, info/) are listed member by member (AdminContainer).
var adminTop = map[string]struct {
	typ AdminFileType
	m   AdminMember
}{
	"gitdir":                {AdminRegular, AdminMember{Fate: FateDies, What: "the registry's link to the tree"}},
	"commondir":             {AdminRegular, AdminMember{Fate: FateDies, What: "the link to the common dir"}},
	"HEAD":                  {AdminRegular, AdminMember{Fate: FateDies, What: "the tree's HEAD, a recovery candidate itself"}},
	"index":                 {AdminRegular, AdminMember{Fate: FateDies, What: "the index, accounted against HEAD"}},
	"locked":                {AdminRegular, AdminMember{Fate: FateDies, What: "the lock, which keeps the tree as locked"}},
	"custody-ready":         {AdminRegular, AdminMember{Fate: FateDies, What: "custody's ready marker"}},
	"COMMIT_EDITMSG":        {AdminRegular, AdminMember{Fate: FateDies, What: "the message of the last commit, which that commit holds"}},
	"MERGE_MODE":            {AdminRegular, AdminMember{Fate: FateDies, What: "a merge's options"}},
	"MERGE_RR":              {AdminRegular, AdminMember{Fate: FateDies, What: "rerere's list of conflicts (its resolutions are in the common dir)"}},
	"gitk.cache":            {AdminRegular, AdminMember{Fate: FateDies, What: "gitk's cache"}},
	"fsmonitor--daemon.ipc": {AdminOther, AdminMember{Fate: FateDies, What: "the file system monitor's socket"}},
	"fsmonitor--daemon":     {AdminDir, AdminMember{Fate: FateDies, What: "the file system monitor's cookies"}},

	"ORIG_HEAD":       {AdminRegular, AdminMember{Fate: FateObjects}},
	"FETCH_HEAD":      {AdminRegular, AdminMember{Fate: FateObjects}},
	"AUTO_MERGE":      {AdminRegular, AdminMember{Fate: FateObjects}},
	"REBASE_HEAD":     {AdminRegular, AdminMember{Fate: FateObjects}},
	"MERGE_AUTOSTASH": {AdminRegular, AdminMember{Fate: FateObjects}},

	"config.worktree":  {AdminRegular, AdminMember{Fate: FateCopied}},
	"MERGE_MSG":        {AdminRegular, AdminMember{Fate: FateCopied}},
	"SQUASH_MSG":       {AdminRegular, AdminMember{Fate: FateCopied}},
	"TAG_EDITMSG":      {AdminRegular, AdminMember{Fate: FateCopied}},
	"NOTES_EDITMSG":    {AdminRegular, AdminMember{Fate: FateCopied}},
	"EDIT_DESCRIPTION": {AdminRegular, AdminMember{Fate: FateCopied}},

	"MERGE_HEAD":           {"", AdminMember{Fate: FateKeeps, Code: CodeOperationInProgress, What: "merge"}},
	"CHERRY_PICK_HEAD":     {"", AdminMember{Fate: FateKeeps, Code: CodeOperationInProgress, What: "cherry-pick"}},
	"REVERT_HEAD":          {"", AdminMember{Fate: FateKeeps, Code: CodeOperationInProgress, What: "revert"}},
	"rebase-merge":         {"", AdminMember{Fate: FateKeeps, Code: CodeOperationInProgress, What: "rebase"}},
	"rebase-apply":         {"", AdminMember{Fate: FateKeeps, Code: CodeOperationInProgress, What: "rebase or am"}},
	"sequencer":            {"", AdminMember{Fate: FateKeeps, Code: CodeOperationInProgress, What: "cherry-pick or revert sequence"}},
	"NOTES_MERGE_PARTIAL":  {"", AdminMember{Fate: FateKeeps, Code: CodeOperationInProgress, What: "notes merge"}},
	"NOTES_MERGE_REF":      {"", AdminMember{Fate: FateKeeps, Code: CodeOperationInProgress, What: "notes merge"}},
	"NOTES_MERGE_WORKTREE": {"", AdminMember{Fate: FateKeeps, Code: CodeOperationInProgress, What: "notes merge"}},
	"modules":              {"", AdminMember{Fate: FateKeeps, Code: CodeSubmodules}},
}

// adminContainers are the directories whose members the catalogue names
// one by one: every file below logs/ is a reflog, below refs/ a
// per-worktree ref; info/ holds the sparse checkout's patterns.
var adminContainers = []string{"logs", "refs", "info"}

// AdminContainer reports whether the admin entry's directory name is one
// whose members are listed one by one (logs/, refs/, info/ and every
// directory below logs/ and refs/). Any other directory is one member.
func AdminContainer(name string) bool {
	for _, c := range adminContainers {
		if name == c || (c != "info" && strings.HasPrefix(name, c+"/")) {
			return true
		}
	}
	return false
}

// AdminMemberOf is the catalogue's word on one member of a tree's admin
// entry: what a removal does with it. A name ending in .lock (at any depth)
// is a git process writing the tree's state now, or one that died doing it;
// a name the catalogue does not know, or a known name that is not of its
// type, is unknown. Both keep the tree.
func AdminMemberOf(f AdminFile) AdminMember {
	unknown := AdminMember{Fate: FateKeeps, Code: CodeUnknownAdminFile}
	if strings.HasSuffix(f.Name, ".lock") {
		return AdminMember{Fate: FateKeeps, Code: CodeAdminLockFile}
	}
	if top, rest, nested := strings.Cut(f.Name, "/"); nested {
		switch {
		case top == "logs" && f.Type != AdminDir:
			return AdminMember{Fate: FateReflog}
		case top == "refs" && f.Type != AdminDir:
			return AdminMember{Fate: FateKeeps, Code: CodePerWorktreeRef}
		case (top == "logs" || top == "refs") && f.Type == AdminDir:
			return AdminMember{Fate: FateDies, What: "a directory of " + top}
		case top == "info" && rest == "sparse-checkout":
			return AdminMember{Fate: FateCopied}
		}
		return unknown
	}
	if AdminContainer(f.Name) {
		if f.Type != AdminDir {
			return unknown
		}
		return AdminMember{Fate: FateDies, What: "a directory of " + f.Name}
	}
	if strings.HasPrefix(f.Name, "BISECT_") {
		return AdminMember{Fate: FateKeeps, Code: CodeOperationInProgress, What: "bisect"}
	}
	if strings.HasPrefix(f.Name, "sharedindex.") && f.Type == AdminRegular {
		return AdminMember{Fate: FateDies, What: "the shared part of a split index"}
	}
	e, ok := adminTop[f.Name]
	switch {
	case !ok:
		return unknown
	case e.m.Fate == FateKeeps, e.typ == f.Type:
		return e.m
	case e.m.Fate == FateObjects || e.m.Fate == FateCopied:
		// What it holds is read when the tree goes; a member that cannot
		// be read then keeps the tree (recovery-failed).
		return e.m
	}
	return unknown
}

// AdminHidden is the hidden state the members of a tree's admin entry
// (files, at admin) give the tree at tree: one operation-in-progress per
// operation, one per-worktree-ref per ref, submodules for modules/, and
// admin-lock-file or unknown-admin-file for each such member. Members that
// die or are kept by the removal give none.
func AdminHidden(admin, tree string, files []AdminFile) []Hidden {
	var hs []Hidden
	ops := map[string]int{}
	for _, f := range files {
		m := AdminMemberOf(f)
		if m.Fate != FateKeeps {
			continue
		}
		switch m.Code {
		case CodeOperationInProgress:
			h := Hidden{Code: m.Code, Path: tree, Detail: "a " + m.What + " is in progress (" + f.Name + ")"}
			if i, seen := ops[m.What]; seen {
				if opMarker(f.Name) {
					hs[i] = h
				}
				continue
			}
			ops[m.What] = len(hs)
			hs = append(hs, h)
		case CodePerWorktreeRef:
			hs = append(hs, Hidden{Code: m.Code, Path: tree, Detail: f.Name + " exists only in this worktree"})
		case CodeSubmodules:
			hs = append(hs, Hidden{Code: m.Code, Path: admin + "/" + f.Name,
				Detail: "the worktree holds submodule repositories; git removes it only by force, which custody never uses (push their commits, then remove the tree yourself)"})
		case CodeAdminLockFile:
			hs = append(hs, Hidden{Code: m.Code, Path: admin + "/" + f.Name, Admin: admin,
				Detail: f.Name + " is a git lock file: a git process is writing the tree's state now, or died doing it"})
		default:
			hs = append(hs, Hidden{Code: CodeUnknownAdminFile, Path: admin + "/" + f.Name, Admin: admin,
				Detail: f.Name + " (" + string(f.Type) + ") is not a member custody knows git keeps in a worktree's admin entry; what it holds would die with the tree"})
		}
	}
	return hs
}

// opMarker reports whether name is the file git itself tests to tell its
// operation is in progress, which a refusal names before the others.
func opMarker(name string) bool {
	return slices.Contains([]string{"BISECT_START", "NOTES_MERGE_PARTIAL"}, name)
}

// AdminKept is what a removal keeps of a tree's admin entry: the members
// whose objects, reflog commits or bytes go under custody's recovery refs
// and directory, by name.
type AdminKept struct {
	Objects []string
	Reflogs []string
	Copies  []string
}

// AdminKeptOf sorts the members of a tree's admin entry by what the
// removal keeps of them. Members that keep the tree are AdminHidden's.
func AdminKeptOf(files []AdminFile) AdminKept {
	var k AdminKept
	for _, f := range files {
		switch AdminMemberOf(f).Fate {
		case FateObjects:
			k.Objects = append(k.Objects, f.Name)
		case FateReflog:
			k.Reflogs = append(k.Reflogs, f.Name)
		case FateCopied:
			k.Copies = append(k.Copies, f.Name)
		}
	}
	return k
}

// AdminFilesAside is where a retry moves an unknown member of the admin
// entry admin (<common>/worktrees/<key>) aside, kept as it is:
// <common>/custody/admin-files/<key>.
func AdminFilesAside(admin string) string {
	i := strings.LastIndex(admin, "/")
	key, worktrees := admin[i+1:], admin[:max(i, 0)]
	common := worktrees[:max(strings.LastIndex(worktrees, "/"), 0)]
	return common + "/custody/admin-files/" + key
}

// AdminAsideRetry is the retry of an unknown member of a tree's admin
// entry (h, unknown-admin-file): the member is moved, as it is, out of
// git's admin entry into custody's directory beside it (AdminFilesAside),
// keeping its place below the entry, where nothing deletes it; then runs.
// It is "" for any other hidden state.
func AdminAsideRetry(h Hidden, then string) string {
	if h.Code != CodeUnknownAdminFile || h.Admin == "" {
		return ""
	}
	rel, ok := strings.CutPrefix(h.Path, h.Admin+"/")
	if !ok || rel == "" {
		return ""
	}
	dst := AdminFilesAside(h.Admin) + "/" + rel
	dir := dst[:strings.LastIndex(dst, "/")]
	return "mkdir -p -- " + QuoteArg(dir) + " && mv -n -- " + QuoteArg(h.Path) + " " + QuoteArg(dst) + " && " + then
}
