package report

import (
	"html/template"
	"io"

	"github.com/custody-sh/custody/machine"
)

// htmlReport renders the report as one self-contained page: inline CSS,
// no script, no external asset, and a Content-Security-Policy that lets
// the page load nothing at all. The page is drawn by html/template, which
// escapes every value for where it stands; each value is first written as
// machine.ShowName writes a name (one line of valid UTF-8 that tells every
// name apart), by the template's show function.
type htmlReport struct{ t *template.Template }

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
.migration{background:#f3f0fa;border-left:4px solid #6a4fa5;padding:4px 10px;margin:6px 0}
h3{font-size:14px;margin:12px 0 4px}h2.group{margin-top:24px}
.unverified{color:#c0392b}.state{font-weight:bold}`

// reportPage holds the page's three parts, executed as the report is
// written: the head once, a section per record, the tail once.
const reportPage = `{{define "head"}}<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>custody journal report</title>
<style>{{.CSS}}</style></head><body>
<h1>custody journal report</h1>
<div class="banner {{.Class}}" id="verification">{{show .Title}}<ul>
{{range .Lines}}<li>{{show .}}</li>
{{end}}</ul></div>
<h2>Summary</h2>
<table class="sum" id="summary">
{{range .Rows}}<tr><td>{{show (index . 0)}}</td><td class="mono">{{show (index . 1)}}</td></tr>
{{end}}</table>
{{end}}{{define "group"}}<h2 class="group" id="{{show .Anchor}}">{{show .Title}}</h2>
{{end}}{{define "section"}}<section class="record" id="{{show .Anchor}}"><h3>{{show .Title}}</h3>
<p>{{show .Kind}} <span class="state">{{show .State}}</span>{{if .Unverified}} <span class="unverified">(holds entries the chain does not vouch for)</span>{{end}}</p>
{{if .Migration}}<div class="migration">{{range .Migration}}<div>{{show .}}</div>{{end}}</div>
{{end}}{{range .Removals}}<div class="proof">{{range .}}<div>{{show .}}</div>{{end}}</div>
{{end}}{{if .Abandon}}<div class="abandon">{{show .Abandon}}</div>
{{end}}{{range .Commands}}<div>{{show .}}</div>
{{end}}<table><tr><th>seq</th><th>at (UTC)</th><th>transition or event</th><th>outcome</th><th>actor</th><th>observation</th></tr>
{{end}}{{define "row"}}<tr{{if .Unverified}} class="unverified"{{end}}><td>{{.Seq}}</td><td class="mono">{{show .At}}</td><td>{{show .What}}</td><td>{{show .Outcome}}</td><td>{{show .Actor}}</td><td class="mono">{{show .Observation}}</td></tr>
{{end}}{{define "section-end"}}</table></section>
{{end}}{{define "tail"}}<p class="mono">end of report: {{.Entries}} entries, head {{show .Head}}</p>
</body></html>
{{end}}`

// reportTemplate parses the page. It is parsed once per report: nothing is
// kept between runs.
func reportTemplate() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{"show": machine.ShowName}).Parse(reportPage))
}

type htmlHead struct {
	CSS          template.CSS
	Class, Title string
	Lines        []string
	Rows         [][2]string
}

type htmlRow struct {
	Seq                                   uint64
	At, What, Outcome, Actor, Observation string
	Unverified                            bool
}

type htmlSection struct {
	Anchor, Title, Kind, State, Abandon string
	Unverified                          bool
	Migration                           []string
	Removals                            [][]string
	Commands                            []string
}

func (h htmlReport) head(w io.Writer, res ReportResult) error {
	v := res.Verification
	class := "ok"
	if !v.ChainVerified {
		class = "bad"
	}
	return h.t.ExecuteTemplate(w, "head", htmlHead{CSS: template.CSS(reportCSS), Class: class,
		Title: bannerTitle(v), Lines: bannerLines(res), Rows: summaryRows(res.Summary)})
}

func (h htmlReport) group(w io.Writer, g machine.ReportGroup, records int) error {
	return h.t.ExecuteTemplate(w, "group", struct{ Anchor, Title string }{"group-" + anchorText(g.Kind+"-"+g.Operation), groupTitle(g, records)})
}

func (h htmlReport) sectionStart(w io.Writer, s machine.ReportSection) error {
	kind, state := kindLine(s)
	page := htmlSection{Anchor: anchor(s), Title: sectionTitle(s), Kind: kind, State: state, Unverified: s.Unverified}
	if s.Migration != nil {
		page.Migration = migrationLines(*s.Migration)
	}
	for _, r := range s.Removals {
		page.Removals = append(page.Removals, removalLines(r))
	}
	if s.AbandonedSeq != 0 {
		page.Abandon = abandonLine(s)
	}
	for _, c := range s.Commands {
		page.Commands = append(page.Commands, commandLine(c))
	}
	return h.t.ExecuteTemplate(w, "section", page)
}

func (h htmlReport) row(w io.Writer, r machine.ReportRow) error {
	return h.t.ExecuteTemplate(w, "row", htmlRow{Seq: r.Seq, At: r.At.UTC().Format("2006-01-02 15:04:05"), What: rowWhat(r),
		Outcome: r.Outcome, Actor: r.Actor, Observation: shortDigest(r.Observation), Unverified: r.Unverified})
}

func (h htmlReport) sectionEnd(w io.Writer) error { return h.t.ExecuteTemplate(w, "section-end", nil) }

func (h htmlReport) tail(w io.Writer, res ReportResult) error {
	return h.t.ExecuteTemplate(w, "tail", struct {
		Entries int
		Head    string
	}{res.Summary.Entries, res.Summary.Head})
}
