package machine

import (
	"strings"
)

// ShowName writes s for a page a person reads (the journal report, a
// markdown export): one line of valid UTF-8 that no other string is
// written as. Every control character and every byte that is not UTF-8
// is an escape (\n, \t, \r, \e, \xNN for a C0 control, DEL or stray
// byte, \u0085 for a C1 control), and every backslash is doubled, always,
// so `\x80` written by a person reads `\\x80` and the byte 0x80 reads
// `\x80`. Text with neither is returned as it is.
func ShowName(s string) string {
	if !HasControl(s) && !strings.Contains(s, `\`) {
		return s
	}
	return escapeText(s)
}

// markdownActive are the characters that can start or end markdown's
// inline syntax (code spans, emphasis, strikethrough, links and images,
// raw HTML and autolinks, entities, math), split a table row or close an
// ATX heading. Each is ASCII punctuation, which CommonMark lets a
// backslash escape anywhere.
const markdownActive = "\\`*_[]<>&|~$#!"

// MarkdownText writes s as markdown text that renders as exactly
// ShowName(s): on one line (a table row or heading stays whole), with
// every character of markdown's syntax backslash-escaped, so a name
// holding `|`, backticks, `<script>` or `**` neither breaks the page's
// structure nor becomes markup.
func MarkdownText(s string) string {
	s = ShowName(s)
	if !strings.ContainsAny(s, markdownActive) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(markdownActive, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
