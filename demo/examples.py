"""Example sentences that show composition: negation, contrast, intensifiers, the papers' own
sentences, and Chinese, as (what it shows, sentence); what it shows is worded by the locales' example_<kind>."""

EXAMPLES = [  # (what it shows, sentence)
    ("negation", "The movie is not good."),
    ("negation", "It is not a bad film at all."),
    ("double_negation", "It is not that the film is not funny."),
    ("contrast", "The acting is great, but the plot is dull."),
    ("contrast", "The plot is dull, but the acting is great."),
    ("intensifier", "The film is good."),
    ("intensifier", "The film is extremely good."),
    ("intensifier", "The film is slightly good."),
    ("lei_2015", "The movie is not nearly as good as the book."),
    ("dcnn_fig1", "The cat sat on the red mat."),
    (
        "adasent_mr",
        (
            "If the movie were all comedy it might work better but it has an ambition to say "
            "something about its subjects but not willingness."
        ),
    ),
    (
        "agt_fig4",
        (
            "Though the plot is predictable, the movie never feels formulaic, because the attention is on "
            "the nuances of the emotional development of the delicate characters."
        ),
    ),
    ("agt_fig4", "Not so much a movie as a picture book for the big screen."),
    ("zh_contrast", "这部电影不怎么好看，但是音乐很棒"),
    ("zh_negation", "质量一点也不好，再也不买了"),
    ("zh_double_negation", "不能说不好用"),
    ("zh_intensifier", "物流非常快，东西特别好"),
]
