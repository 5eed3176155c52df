"""English as the drafter and the authors' hints read it: tokens, a word's verb reading (lemminflect's
lexicon), and the word lists both use. Pure Python, below the services, so an ACU's hints and the
drafter read a verb by one rule."""
