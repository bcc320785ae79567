utility_2,-1,0,0      	all	-4.8750
set_P                 	all	0.1583
set_relative_P        	all	0.2848
set_recall            	all	0.2848
set_map               	all	0.0763
set_F_0.5             	all	0.1848
num_nonrel_judged_ret 	all	26
