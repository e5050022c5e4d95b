package main

import (
	"strings"
	"testing"
)

func TestWriteRoffKeepsProseOnly(t *testing.T) {
	page := `.\" a comment
.TH LS "1" "September 2022" "GNU coreutils 9.1" "User Commands"
.SH NAME
ls \- list directory contents
.SH DESCRIPTION
.PP
List information about the FILEs (the current directory by default).
Sort entries alphabetically if none of \fB\-cftuvSUX\fR nor \fB\-\-sort\fR is specified.
.TP
\fB\-a\fR, \fB\-\-all\fR
do not ignore entries starting with \(aq.\(aq
.B bold words
`
	var b strings.Builder
	writeRoff(&b, page)
	want := "ls list directory contents\n" +
		"list information about the files the current directory by default sort entries alphabetically if none of cftuv sux nor sort is specified\n" +
		"a all do not ignore entries starting with bold words\n"
	if b.String() != want {
		t.Errorf("writeRoff:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestWriteDEP11KeepsEnglishSummariesAndDescriptions(t *testing.T) {
	doc := `---
Type: desktop-application
ID: org.example.Weather
Name:
  C: Weather
  de: Wetter
Summary:
  de: Zeigt das Wetter
  C: Show weather conditions and forecast
Description:
  de: >-
    <p>Das Wetter.</p>
  C: >-
    <p>Shows the temperature
    for your city.</p>
    <ul><li>Rain alerts</li></ul>
Categories:
- Utility
`
	var b strings.Builder
	writeDEP11(&b, []byte(doc))
	want := "show weather conditions and forecast\nshows the temperature for your city\nrain alerts\n"
	if b.String() != want {
		t.Errorf("writeDEP11:\n%s\nwant:\n%s", b.String(), want)
	}
}
