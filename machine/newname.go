package machine

import "fmt"

// CheckWorktreeName refuses, with CodeEmptyName, a name for a new worktree
// that holds nothing an id can be made of: empty, only white space, or no
// letter a-z or digit at all (Slug would fall back to a made-up "wt").
// Any other name is accepted (nil).
func CheckWorktreeName(name string) *Refusal {
	if sanitize(name) != "" {
		return nil
	}
	what := "is empty"
	if name != "" {
		shown := QuoteArg(name)
		if HasControl(name) {
			// Shown, not pasted: one line, its controls escaped.
			shown = "'" + EscapeControl(name) + "'"
		}
		what = fmt.Sprintf("%s has no letter a-z or digit 0-9", shown)
	}
	return &Refusal{Code: CodeEmptyName, Retry: "custody new NAME",
		Message: fmt.Sprintf("the worktree name %s, so no id can be made of it; nothing was created: give a name such as fix-login", what)}
}
