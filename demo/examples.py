"""Example sentences that show composition: negation, contrast, intensifiers, the papers' own
sentences, and Chinese. (what it shows, sentence)."""

EXAMPLES = [  # (what it shows, sentence)
    ("negation", "The movie is not good."),
    ("negation", "It is not a bad film at all."),
    ("double negation", "It is not that the film is not funny."),
    ("contrast", "The acting is great, but the plot is dull."),
    ("contrast", "The plot is dull, but the acting is great."),
    ("intensifier", "The film is good."),
    ("intensifier", "The film is extremely good."),
    ("intensifier", "The film is slightly good."),
    ("Lei et al. 2015 §3", "The movie is not nearly as good as the book."),
    ("DCNN Fig. 1", "The cat sat on the red mat."),
    ("AdaSent (MR example)", ("If the movie were all comedy it might work better but it has an ambition to say "
                              "something about its subjects but not willingness.")),
    ("AGT Fig. 4", ("Though the plot is predictable, the movie never feels formulaic, because the attention is on "
                    "the nuances of the emotional development of the delicate characters.")),
    ("AGT Fig. 4", "Not so much a movie as a picture book for the big screen."),
    ("中文 转折", "这部电影不怎么好看，但是演员很棒"),
    ("中文 否定", "质量一点也不好，再也不买了"),
    ("中文 双重否定", "不能说不好用"),
    ("中文 程度", "物流非常快，东西特别好"),
]
