package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/skillbox-dev/skillbox/agent/tooldef"
	"github.com/skillbox-dev/skillbox/agent/toolset"
)

// Message is one message of an OpenAI Chat Completions conversation.
type Message struct {
	Role string `json:"role"` // system, user, assistant or tool
	// Content is the text; an assistant message that only calls tools has none.
	Content   string     `json:"content,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is, in a tool message, the id of the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// ToolCall is a function call the assistant asks for.
type ToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"` // "function"
	Function struct {
		Name string `json:"name"`
		// Arguments is a JSON object, as a string.
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// call makes a ToolCall.
func call(id, name, args string) ToolCall {
	c := ToolCall{ID: id, Type: "function"}
	c.Function.Name, c.Function.Arguments = name, args
	return c
}

// Model is an assistant: given the conversation so far and the tools, the next assistant message.
type Model interface {
	Complete(ctx context.Context, msgs []Message, tools []tooldef.OpenAITool) (Message, error)
}

// Turn is one canned assistant turn of a [Scripted] model, made from the conversation so far so
// it can use what the tools returned.
type Turn func(msgs []Message) Message

// Scripted is a model that replays its turns in order: a stand-in for a real one, so the loop
// runs offline and in tests. It fails when the conversation needs more turns than it has.
func Scripted(turns []Turn) Model { return &scripted{turns: turns} }

type scripted struct {
	turns []Turn
	next  int
}

func (s *scripted) Complete(_ context.Context, msgs []Message, _ []tooldef.OpenAITool) (Message, error) {
	if s.next == len(s.turns) {
		return Message{}, fmt.Errorf("the script has no turn %d", s.next+1)
	}
	s.next++
	return s.turns[s.next-1](msgs), nil
}

// WordCountScript is what a model does with the default prompt: look at the skills, count the
// words of the text after the prompt's colon with skill_word_count, then answer from the result.
var WordCountScript = []Turn{
	func([]Message) Message {
		return Message{ToolCalls: []ToolCall{call("call_1", toolset.ToolListSkills, `{}`)}}
	},
	func(msgs []Message) Message {
		text := lastContent(msgs, "user")
		if _, after, ok := strings.Cut(text, ":"); ok {
			text = strings.TrimSpace(after)
		}
		args, _ := json.Marshal(map[string]string{"text": text})
		return Message{ToolCalls: []ToolCall{call("call_2", tooldef.Name("word-count"), string(args))}}
	},
	func(msgs []Message) Message {
		out := lastContent(msgs, "tool")
		var stats struct {
			Words int `json:"words"`
			Top   []struct {
				Word  string `json:"word"`
				Count int    `json:"count"`
			} `json:"top"`
		}
		if strings.HasPrefix(out, "error: ") || json.Unmarshal([]byte(out), &stats) != nil {
			return Message{Content: "I could not count the words: " + out}
		}
		answer := fmt.Sprintf("The text has %d words.", stats.Words)
		if len(stats.Top) > 0 {
			answer += fmt.Sprintf(" The most frequent is %q (%d times).", stats.Top[0].Word, stats.Top[0].Count)
		}
		return Message{Content: answer}
	},
}

// lastContent is the content of the last message of role.
func lastContent(msgs []Message, role string) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == role {
			return msgs[i].Content
		}
	}
	return ""
}

// OpenAIClient is a [Model] served by an OpenAI-compatible Chat Completions API (OpenAI, or any
// server that speaks its protocol: vLLM, Ollama, LiteLLM, ...).
type OpenAIClient struct {
	// Endpoint is the API's base URL ("https://api.openai.com/v1"), or the full URL of its
	// chat/completions.
	Endpoint string
	APIKey   string
	Model    string
	// HTTP is the client to use; nil means one with a two-minute timeout.
	HTTP *http.Client
}

// maxResponseBytes bounds what is read of a reply.
const maxResponseBytes = 16 << 20

func (c *OpenAIClient) Complete(ctx context.Context, msgs []Message, tools []tooldef.OpenAITool) (Message, error) {
	body, err := json.Marshal(map[string]any{"model": c.Model, "messages": msgs, "tools": tools})
	if err != nil {
		return Message{}, err
	}
	url := strings.TrimSuffix(c.Endpoint, "/")
	if !strings.HasSuffix(url, "/chat/completions") {
		url += "/chat/completions"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Message{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.APIKey)
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 2 * time.Minute}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Message{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return Message{}, err
	}
	var out struct {
		Choices []struct {
			Message Message `json:"message"`
		} `json:"choices"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	jerr := json.Unmarshal(data, &out)
	switch {
	case resp.StatusCode/100 != 2 && jerr == nil && out.Error != nil:
		return Message{}, fmt.Errorf("%s: %s", resp.Status, out.Error.Message)
	case resp.StatusCode/100 != 2:
		return Message{}, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(data[:min(len(data), 512)])))
	case jerr != nil:
		return Message{}, fmt.Errorf("the reply is not JSON: %w", jerr)
	case len(out.Choices) == 0:
		return Message{}, errors.New("the reply has no choices")
	}
	return out.Choices[0].Message, nil
}
