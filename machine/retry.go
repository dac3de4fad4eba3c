package machine

import "strings"

// CommandAgain is the custody command line args run again, each word quoted
// for pasting, with the global flags extra first. A flag with a value that
// extra names (--lock-timeout, --observe-timeout) gives way among args to
// the one in extra, so the pasted retry waits as long as it says.
func CommandAgain(args []string, extra ...string) string {
	words := []string{"custody"}
	for _, a := range extra {
		words = append(words, QuoteArg(a))
	}
	replaces := map[string]bool{}
	for _, a := range extra {
		if strings.HasPrefix(a, "--") {
			replaces[a] = true
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			for _, rest := range args[i:] {
				words = append(words, QuoteArg(rest))
			}
			break
		}
		if replaces[a] {
			i++
			continue
		}
		if name, _, ok := strings.Cut(a, "="); ok && replaces[name] {
			continue
		}
		words = append(words, QuoteArg(a))
	}
	return strings.Join(words, " ")
}
