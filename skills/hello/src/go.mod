module github.com/skillbox-dev/skillbox/skills/hello

go 1.24

require github.com/skillbox-dev/skillbox/sdk/go v0.0.0

require github.com/extism/go-pdk v1.1.3 // indirect

replace github.com/skillbox-dev/skillbox/sdk/go => ../../../sdk/go
