def greet(name: str) -> str:
    # TODO: localise the greeting
    return f"Hello, {name}!"


if __name__ == "__main__":
    print(greet("warden"))
