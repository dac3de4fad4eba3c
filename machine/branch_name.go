package machine

import (
	"fmt"
	"strings"
)

// BranchNameProblem says why git would not take name as a branch name, by
// the rules of `git check-ref-format --branch` (refs/heads/<name> a valid
// ref name, not beginning with '-', not HEAD), or "" when it would. It
// never expands the @{-N} shorthand git expands in a repository: a name
// holding "@{" is refused. Bytes that are not UTF-8 are allowed, as git
// allows them.
func BranchNameProblem(name string) string {
	switch {
	case name == "":
		return "it is empty"
	case strings.HasPrefix(name, "-"):
		return "it begins with '-'"
	case name == "HEAD":
		return "HEAD names the checked-out commit, not a branch"
	case name == "@":
		return "'@' alone stands for HEAD"
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < 0x20 || c == 0x7f {
			return "it holds a control character"
		}
		if strings.IndexByte(" ~^:?*[\\", c) >= 0 {
			return fmt.Sprintf("it holds %q, which git keeps out of ref names", string(c))
		}
	}
	switch {
	case strings.Contains(name, ".."):
		return "it holds '..'"
	case strings.Contains(name, "@{"):
		return "it holds '@{'"
	case strings.HasSuffix(name, "."):
		return "it ends with '.'"
	}
	for _, part := range strings.Split(name, "/") {
		switch {
		case part == "":
			return "it has an empty component (a '/' at its start or end, or two together)"
		case strings.HasPrefix(part, "."):
			return fmt.Sprintf("its component %q begins with '.'", part)
		case strings.HasSuffix(part, ".lock"):
			return fmt.Sprintf("its component %q ends with '.lock'", part)
		}
	}
	return ""
}

// SameName is the records among live whose id was made of a name with
// name's slug (WorktreeID: Slug(name), '-', 6 hex digits; or the slug
// itself, as an adopted tree's id may be): the trees a person knows by the
// name new is given again. Tombstoned records are left out.
func SameName(name string, live []Record) []Record {
	slug := Slug(name)
	var out []Record
	for _, r := range live {
		if r.State == StateTombstoned || r.Kind != "" && r.Kind != KindWorktree {
			continue
		}
		if r.ID == slug || ValidID(r.ID) && r.ID[:strings.LastIndexByte(r.ID, '-')] == slug {
			out = append(out, r)
		}
	}
	return out
}

// NameInUseWarning says that new, given name, made a tree although the live
// trees same (SameName) already go by it: each named by id and path.
func NameInUseWarning(name string, same []Record) string {
	trees := make([]string, len(same))
	for i, r := range same {
		trees[i] = fmt.Sprintf("%s at %s", r.ID, QuoteArg(r.Path))
	}
	what := "a live tree"
	if len(same) > 1 {
		what = fmt.Sprintf("%d live trees", len(same))
	}
	return fmt.Sprintf("the name %s is already used by %s: %s; the new tree has an id and path of its own", shownName(name), what, strings.Join(trees, ", "))
}
