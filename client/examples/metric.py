def score(input, output, expected):
    if str(output).strip() == expected["capital"]:
        return 1.0, {"feedback": "Correct: the city name alone.", "scores": {"exact": 1.0}}
    return 0.0, {
        "feedback": "The output must be the city name only, with no other words.",
        "scores": {"exact": 0.0},
    }
