package main

import (
	"testing"

	skill "github.com/skillbox-dev/skillbox/sdk/go"
	"github.com/skillbox-dev/skillbox/sdk/go/skillboxtest"
)

func TestGet(t *testing.T) {
	const page = "https://example.com/"
	h := skillboxtest.New(
		skillboxtest.Route("GET", page, func(skill.Request) (*skill.Response, error) {
			return &skill.Response{
				Status:  200,
				URL:     page + "index.html", // after a redirect
				Headers: map[string]string{"Content-Type": "text/html"},
				Body:    []byte("<html><title>Example &amp; Co</title></html>"),
			}, nil
		}),
		skillboxtest.Route("GET", page+"gone", skillboxtest.Text(404, "not here")),
		skillboxtest.Route("GET", page+"down", skillboxtest.Fail(skill.Failed, page+"down: timed out")),
	)
	tests := []struct {
		url  string
		want string // the result JSON, or the error the model reads
	}{
		{page, `{"status":200,"contentType":"text/html","title":"Example \u0026 Co","bytes":44,"url":"https://example.com/index.html"}`},
		{page + "gone", `{"status":404,"contentType":"text/plain; charset=utf-8","title":"","bytes":8,"url":"https://example.com/gone"}`},
		{page + "down", "fetch: failed: https://example.com/down: timed out"},
		{"https://evil.example/x", "fetch: denied: https://evil.example/x: host evil.example is not on the grant (granted: example.com)"},
		{"", "url is required"},
	}
	for _, tc := range tests {
		res := skillboxtest.Run(h, get, args{URL: tc.url})
		got := string(res.Result)
		if !res.Success {
			got = res.Error
		}
		if got != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.url, got, tc.want)
		}
	}
	if logs := h.Logs(); len(logs) != 2 || logs[0].String() != "info: GET https://example.com/index.html: 200, 44 bytes" {
		t.Errorf("logs %v", logs)
	}
}
