package skill_test

import (
	"errors"
	"fmt"

	skill "github.com/skillbox-dev/skillbox/sdk/go"
)

// A skill branches on the kind of failure with errors.Is, and can hand the error's text
// to the model unchanged.
func ExampleError() {
	var err error = &skill.Error{Op: "fetch", Status: skill.Denied, Message: `host "x" is not on the grant`}
	err = fmt.Errorf("load page: %w", err)

	fmt.Println(errors.Is(err, skill.ErrDenied), errors.Is(err, skill.ErrNotFound))
	fmt.Println(err)
	// Output:
	// true false
	// load page: fetch: denied: host "x" is not on the grant
}

func ExampleStatus_String() {
	for s := skill.OK; s <= skill.Failed; s++ {
		fmt.Print(s, " ")
	}
	fmt.Println()
	// Output: ok not_found denied invalid limit failed
}
