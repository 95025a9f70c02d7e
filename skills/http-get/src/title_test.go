package main

import "testing"

func TestTitle(t *testing.T) {
	tests := map[string]string{
		`<html><head><title>Example Domain</title></head></html>`:          "Example Domain",
		"<TITLE lang=\"en\">\n  Tom &amp; Jerry &lt;3  \n</Title>":         "Tom & Jerry <3",
		`<title>&quot;Quoted&quot; &#39;single&#39; &gt; &amp;lt;</title>`: `"Quoted" 'single' > &lt;`,
		`<title></title>`:                          "",
		`<p>no title</p>`:                          "",
		`<titles>not it</titles><title>it</title>`: "it",
	}
	for body, want := range tests {
		if got := title([]byte(body)); got != want {
			t.Errorf("title(%q) = %q, want %q", body, got, want)
		}
	}
}
