"""The Lite2.x human-unit budget: predict which sentences machines simulate poorly, keep human ACUs there."""
