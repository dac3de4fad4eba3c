package machine

import "strings"

// CommandAgain is the custody command line args run again, each word quoted
// for pasting, with the global flags extra first. A --lock-timeout among
// args gives way to one in extra, so the pasted retry waits as long as it
// says.
func CommandAgain(args []string, extra ...string) string {
	words := []string{"custody"}
	for _, a := range extra {
		words = append(words, QuoteArg(a))
	}
	replaces := false
	for _, a := range extra {
		replaces = replaces || a == "--lock-timeout"
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			for _, rest := range args[i:] {
				words = append(words, QuoteArg(rest))
			}
			break
		}
		if replaces && a == "--lock-timeout" {
			i++
			continue
		}
		if replaces && strings.HasPrefix(a, "--lock-timeout=") {
			continue
		}
		words = append(words, QuoteArg(a))
	}
	return strings.Join(words, " ")
}
