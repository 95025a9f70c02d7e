package skillboxtest_test

import (
	"errors"
	"fmt"

	skill "github.com/skillbox-dev/skillbox/sdk/go"
	"github.com/skillbox-dev/skillbox/sdk/go/skillboxtest"
)

// weather is a handler as a skill would write it: it fetches a forecast with a granted
// token, caches it in the workspace, and falls back to the cache when the fetch is refused.
func weather(ctx *skill.Context, args struct {
	City string `json:"city"`
}) (map[string]string, error) {
	token, ok := ctx.Env("WEATHER_TOKEN")
	if !ok {
		return nil, errors.New("WEATHER_TOKEN is not set")
	}
	cache := "/workspace/" + args.City + ".txt"
	resp, err := ctx.Fetch(skill.Request{
		URL:     "https://api.weather.example/v1/" + args.City,
		Headers: map[string]string{"Authorization": "Bearer " + token},
	})
	if errors.Is(err, skill.ErrDenied) {
		old, rerr := ctx.ReadFile(cache)
		if rerr != nil {
			return nil, fmt.Errorf("%w (and no cache: %w)", err, rerr)
		}
		return map[string]string{"forecast": string(old), "source": "cache"}, nil
	}
	if err != nil {
		return nil, err
	}
	var f struct{ Forecast string }
	if err := resp.JSON(&f); err != nil {
		return nil, err
	}
	ctx.Infof("%s: %s", args.City, f.Forecast)
	if err := ctx.WriteFile(cache, []byte(f.Forecast)); err != nil {
		return nil, err
	}
	return map[string]string{"forecast": f.Forecast, "source": "api"}, nil
}

// A handler runs natively against a scripted host: a route, a variable and a writable
// mount. The test then reads what the skill left behind.
func Example() {
	h := skillboxtest.New(
		skillboxtest.Env("WEATHER_TOKEN", "t0k"),
		skillboxtest.Mount("/workspace", skillboxtest.ReadWrite),
		skillboxtest.Route("GET", "https://api.weather.example/v1/oslo",
			skillboxtest.JSON(200, map[string]string{"forecast": "snow"})),
	)
	res := skillboxtest.Run(h, weather, map[string]string{"city": "oslo"})
	fmt.Printf("success=%v result=%s\n", res.Success, res.Result)

	cached, _ := h.File("/workspace/oslo.txt")
	fmt.Println("cached:", cached)
	fmt.Println("logs:", h.Logs())
	fmt.Println("sent:", h.Requests()[0].Headers["Authorization"])
	// Output:
	// success=true result={"forecast":"snow","source":"api"}
	// cached: snow
	// logs: [info: oslo: snow]
	// sent: Bearer t0k
}

// Error paths are scripted the same way: no route for the host means the fetch is denied,
// exactly as a host off the manifest's network grant, and a missing file is ErrNotFound.
func Example_errors() {
	h := skillboxtest.New(
		skillboxtest.Env("WEATHER_TOKEN", "t0k"),
		skillboxtest.Mount("/workspace", skillboxtest.ReadOnly),
	)
	res := skillboxtest.Run(h, weather, map[string]string{"city": "oslo"})
	fmt.Println(res.Success)
	fmt.Println(res.Error)
	fmt.Println(h.Denied())

	h = skillboxtest.New(
		skillboxtest.Env("WEATHER_TOKEN", "t0k"),
		skillboxtest.Mount("/workspace", skillboxtest.ReadOnly),
		skillboxtest.File("/workspace/oslo.txt", "rain"),
	)
	res = skillboxtest.Run(h, weather, map[string]string{"city": "oslo"})
	fmt.Printf("%s\n", res.Result)
	// Output:
	// false
	// fetch: denied: https://api.weather.example/v1/oslo: host api.weather.example is not on the grant (this run has no network access) (and no cache: read_file: not found: /workspace/oslo.txt: no such file)
	// [fetch https://api.weather.example/v1/oslo: host api.weather.example is not on the grant]
	// {"forecast":"rain","source":"cache"}
}
