package report

import (
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/custody-sh/custody/machine"
)

// htmlReport renders the report as one self-contained page: inline CSS,
// no script, no external asset, and a Content-Security-Policy that lets
// the page load nothing at all.
type htmlReport struct{}

// reportCSS is the page's only style. Fonts are named exactly (DejaVu, the
// fallback every Debian browser has) so the page renders the same wherever
// it is opened.
const reportCSS = `body{margin:0;padding:16px 24px;font:13px/1.45 "DejaVu Sans",sans-serif;color:#1a1a1a;background:#fff;width:1100px}
h1{font-size:20px;margin:0 0 8px}h2{font-size:15px;margin:18px 0 6px;border-bottom:1px solid #ccc}
code,.mono{font-family:"DejaVu Sans Mono",monospace;font-size:12px}
.banner{padding:8px 12px;border-radius:4px;margin:8px 0 12px;font-weight:bold}
.ok{background:#e3f4e1;border:1px solid #5a9e50}.bad{background:#fbe3e1;border:1px solid #c0392b}
.banner ul{margin:4px 0 0 18px;padding:0;font-weight:normal}
table{border-collapse:collapse;margin:4px 0}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f4f4f4}.sum td:first-child{width:220px}
.proof{background:#f6f8fb;border-left:4px solid #3b6ea5;padding:4px 10px;margin:6px 0}
.abandon{background:#fff6e0;border-left:4px solid #c98a00;padding:4px 10px;margin:6px 0}
.unverified{color:#c0392b}.state{font-weight:bold}`

func (htmlReport) head(w io.Writer, res ReportResult) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
	b.WriteString("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n")
	b.WriteString("<title>custody journal report</title>\n<style>" + reportCSS + "</style></head><body>\n")
	b.WriteString("<h1>custody journal report</h1>\n")
	v := res.Verification
	class := "ok"
	if !v.ChainVerified {
		class = "bad"
	}
	fmt.Fprintf(&b, "<div class=\"banner %s\" id=\"verification\">%s<ul>\n", class, esc(bannerTitle(v)))
	for _, l := range bannerLines(res) {
		fmt.Fprintf(&b, "<li>%s</li>\n", esc(l))
	}
	b.WriteString("</ul></div>\n<h2>Summary</h2>\n<table class=\"sum\" id=\"summary\">\n")
	for _, kv := range summaryRows(res.Summary) {
		fmt.Fprintf(&b, "<tr><td>%s</td><td class=\"mono\">%s</td></tr>\n", esc(kv[0]), esc(kv[1]))
	}
	b.WriteString("</table>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func (htmlReport) section(w io.Writer, s machine.ReportSection) error {
	var b strings.Builder
	title := sectionTitle(s)
	fmt.Fprintf(&b, "<section class=\"record\" id=\"%s\"><h2>%s</h2>\n", esc(anchor(s)), esc(title))
	fmt.Fprintf(&b, "<p>%s <span class=\"state\">%s</span>%s</p>\n", esc(s.Kind), esc(stateWord(s.State)), unverifiedNote(s.Unverified))
	for _, r := range s.Removals {
		b.WriteString("<div class=\"proof\">")
		for _, l := range removalLines(r) {
			fmt.Fprintf(&b, "<div>%s</div>", esc(l))
		}
		b.WriteString("</div>\n")
	}
	if s.AbandonedSeq != 0 {
		fmt.Fprintf(&b, "<div class=\"abandon\">%s</div>\n", esc(abandonLine(s)))
	}
	for _, c := range s.Commands {
		fmt.Fprintf(&b, "<div>%s</div>\n", esc(commandLine(c)))
	}
	b.WriteString("<table><tr><th>seq</th><th>at (UTC)</th><th>transition or event</th><th>outcome</th><th>actor</th><th>observation</th></tr>\n")
	for _, r := range s.Rows {
		cls := ""
		if r.Unverified {
			cls = " class=\"unverified\""
		}
		fmt.Fprintf(&b, "<tr%s><td>%d</td><td class=\"mono\">%s</td><td>%s</td><td>%s</td><td>%s</td><td class=\"mono\">%s</td></tr>\n",
			cls, r.Seq, esc(r.At.UTC().Format("2006-01-02 15:04:05")), esc(rowWhat(r)), esc(r.Outcome), esc(r.Actor), esc(shortDigest(r.Observation)))
	}
	b.WriteString("</table></section>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func (htmlReport) tail(w io.Writer, res ReportResult) error {
	_, err := fmt.Fprintf(w, "<p class=\"mono\">end of report: %d entries, head %s</p>\n</body></html>\n", res.Summary.Entries, esc(res.Summary.Head))
	return err
}

// esc writes text for the page: machine.ShowName (one line of valid
// UTF-8 that tells every name apart), then HTML-escaped. Every string the
// page shows goes through it.
func esc(s string) string { return html.EscapeString(machine.ShowName(s)) }

func unverifiedNote(u bool) string {
	if !u {
		return ""
	}
	return " <span class=\"unverified\">(holds entries the chain does not vouch for)</span>"
}
