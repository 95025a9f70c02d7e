package runtime
