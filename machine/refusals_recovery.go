package machine

import "fmt"

// The refusals of keeping what would die with a removed tree (its admin
// entry's reflogs, pseudorefs and per-worktree files): what cannot be read
// or kept keeps the tree.

// AdminEntryUnlistedRefusal keeps a tree whose admin entry admin cannot be
// listed (err): what would die with it is unknown.
func AdminEntryUnlistedRefusal(admin string, err error) *Refusal {
	return &Refusal{Code: CodeRecoveryFailed, Path: admin, Retry: "custody plan",
		Message: fmt.Sprintf("the admin entry %s cannot be listed (%v), so what would die with the tree is unknown; the tree is kept", admin, err)}
}

// AdminAppearedRefusal keeps a tree whose admin entry holds h, which was
// not there when the tree was observed: the retry moves an unknown file
// aside (AdminAsideRetry) before planning again.
func AdminAppearedRefusal(h Hidden) *Refusal {
	retry := AdminAsideRetry(h, "custody plan")
	if retry == "" {
		retry = "custody plan"
	}
	return &Refusal{Code: h.Code, Path: h.Path, Retry: retry,
		Message: fmt.Sprintf("%s: %s; it was not there when the tree was observed, and it would die with the tree", h.Path, h.Detail)}
}

// pseudorefRefusal keeps a tree whose pseudoref file at path cannot be
// read (why).
func pseudorefRefusal(path, why string) *Refusal {
	return &Refusal{Code: CodeRecoveryFailed, Path: path, Retry: "custody plan",
		Message: fmt.Sprintf("%s cannot be read (%s), so custody cannot keep the objects it names; the tree is kept", path, why)}
}

// PseudorefUnreadableRefusal keeps a tree whose pseudoref file at path
// cannot be read (err).
func PseudorefUnreadableRefusal(path string, err error) *Refusal {
	return pseudorefRefusal(path, err.Error())
}

// PseudorefNotRegularRefusal keeps a tree whose pseudoref at path is not
// a regular file.
func PseudorefNotRegularRefusal(path string) *Refusal {
	return pseudorefRefusal(path, "not a regular file")
}

// PseudorefLineRefusal keeps a tree whose pseudoref file at path names no
// object on line (counted from 1).
func PseudorefLineRefusal(path string, line int) *Refusal {
	return pseudorefRefusal(path, fmt.Sprintf("line %d names no object", line))
}

// reflogRefusal keeps a tree whose reflog at path cannot be read (why).
func reflogRefusal(path, why string) *Refusal {
	return &Refusal{Code: CodeRecoveryFailed, Path: path, Retry: "custody resume",
		Message: fmt.Sprintf("the reflog %s cannot be read (%s), so custody cannot tell which commits only it holds; the tree is kept", path, why)}
}

// ReflogUnreadableRefusal keeps a tree whose reflog at path cannot be
// read (err).
func ReflogUnreadableRefusal(path string, err error) *Refusal {
	return reflogRefusal(path, err.Error())
}

// ReflogNotRegularRefusal keeps a tree whose reflog at path is not a
// regular file.
func ReflogNotRegularRefusal(path string) *Refusal {
	return reflogRefusal(path, "not a regular file")
}

// keptFileRefusal keeps a tree whose admin file at path, which custody
// copies before removal, cannot be kept (why).
func keptFileRefusal(path, why string) *Refusal {
	return &Refusal{Code: CodeRecoveryFailed, Path: path, Retry: "custody resume",
		Message: fmt.Sprintf("%s %s, so what it holds cannot be kept; the tree is kept", path, why)}
}

// KeptFileUnreadableRefusal keeps a tree whose admin file at path, which
// custody copies before removal, cannot be read (err).
func KeptFileUnreadableRefusal(path string, err error) *Refusal {
	return keptFileRefusal(path, "cannot be read: "+err.Error())
}

// KeptFileNotRegularRefusal keeps a tree whose admin file at path, which
// custody copies before removal, is not a regular file.
func KeptFileNotRegularRefusal(path string) *Refusal {
	return keptFileRefusal(path, "is not a regular file")
}
