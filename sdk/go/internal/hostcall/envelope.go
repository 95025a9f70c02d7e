package hostcall

import (
	"encoding/json"
	"fmt"
)

// Handle turns a call's JSON input into the SkillResult envelope by way of h: the body of
// skill.Run, and of skillboxtest.Run, which must answer exactly as a real run does. C is
// *skill.Context; it is a type parameter only because this package cannot import skill.
//
// Empty input is decoded as {}. Arguments that do not decode, a result that does not
// encode and a panic in h all become success:false.
func Handle[C, A, R any](ctx C, input []byte, h func(ctx C, args A) (R, error)) []byte {
	var args A
	if len(input) == 0 {
		input = []byte("{}")
	}
	if err := json.Unmarshal(input, &args); err != nil {
		return failure("decode arguments: " + err.Error())
	}
	result, err := call(ctx, args, h)
	if err != nil {
		return failure(err.Error())
	}
	raw, err := json.Marshal(result)
	if err != nil {
		return failure("encode result: " + err.Error())
	}
	out := append([]byte(`{"success":true,"result":`), raw...)
	return append(out, '}')
}

// call runs h, turning a panic into an error carrying the panic's message.
func call[C, A, R any](ctx C, args A, h func(ctx C, args A) (R, error)) (result R, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return h(ctx, args)
}

// failure returns the envelope of a failed call.
func failure(msg string) []byte {
	b, _ := json.Marshal(struct {
		Success bool   `json:"success"`
		Error   string `json:"error"`
	}{false, msg})
	return b
}
