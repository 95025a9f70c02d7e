package main

import (
	"encoding/json"
	"testing"
)

func TestCount(t *testing.T) {
	tests := []struct {
		text string
		top  int
		want string
	}{
		{"", 5, `{"words":0,"lines":0,"characters":0,"top":[]}`},
		{"\n", 5, `{"words":0,"lines":1,"characters":1,"top":[]}`},
		{"a\nb\n", 5, `{"words":2,"lines":2,"characters":4,"top":[{"word":"a","count":1},{"word":"b","count":1}]}`},
		{"a\n\nb", 0, `{"words":2,"lines":3,"characters":4,"top":[]}`},
		{
			"The cat saw the dog.\nThe dog didn't care.", 2,
			`{"words":9,"lines":2,"characters":41,"top":[{"word":"the","count":3},{"word":"dog","count":2}]}`,
		},
		{
			"'Quoted' don’t DON'T well-known 42 42", 5,
			`{"words":7,"lines":1,"characters":37,"top":[{"word":"42","count":2},{"word":"don't","count":2},{"word":"known","count":1},{"word":"quoted","count":1},{"word":"well","count":1}]}`,
		},
		{"Ünïcödé ÜNÏCÖDÉ 日本", 5, `{"words":3,"lines":1,"characters":18,"top":[{"word":"ünïcödé","count":2},{"word":"日本","count":1}]}`},
	}
	for _, tc := range tests {
		b, err := json.Marshal(count(tc.text, tc.top))
		if err != nil || string(b) != tc.want {
			t.Errorf("count(%q, %d)\n got %s (%v)\nwant %s", tc.text, tc.top, b, err, tc.want)
		}
	}
}
