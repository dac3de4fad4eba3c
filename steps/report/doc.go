// Package report renders the auditor's report of a journal export
// (`custody journal report`, Markdown or HTML) and signs and checks a
// journal head (`custody journal sign`, `--signature`). It is a feature of
// package steps: it may import the steps core, never another feature.
package report
